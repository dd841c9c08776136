$offlisting
$offdigit

EQUATIONS
	budget_0__hi
	budget_1__hi
	budget_2__hi
	budget_3__hi
	budget_4__hi
	budget_5__hi
	stationarity_0_
	stationarity_1_
	stationarity_2_
	stationarity_3_
	stationarity_4_
	stationarity_5_
	stationarity_6_
	stationarity_7_
	stationarity_8_
	stationarity_9_
	objective;

POSITIVE VARIABLES
	alpha_1_
	alpha_7_
	alpha_13_
	alpha_2_
	alpha_8_
	alpha_14_
	alpha_3_
	alpha_9_
	alpha_15_
	alpha_4_
	alpha_10_
	alpha_16_
	alpha_5_
	alpha_11_
	alpha_17_
	alpha_19_
	alpha_6_
	alpha_12_
	alpha_18_;

VARIABLES
	GAMS_OBJECTIVE
	w_0_
	s_0_
	w_1_
	s_1_
	w_2_
	s_2_
	w_3_
	s_3_
	w_4_
	s_4_
	w_5_
	s_5_
	w_6_
	s_6_
	w_7_
	s_7_
	w_8_
	s_8_
	w_9_
	s_9_;


budget_0__hi.. alpha_1_ + alpha_7_ + alpha_13_ =l= 1 ;
budget_1__hi.. alpha_2_ + alpha_8_ + alpha_14_ =l= 1 ;
budget_2__hi.. alpha_3_ + alpha_9_ + alpha_15_ =l= 1 ;
budget_3__hi.. alpha_4_ + alpha_10_ + alpha_16_ =l= 1 ;
budget_4__hi.. alpha_5_ + alpha_11_ + alpha_17_ + alpha_19_ =l= 1 ;
budget_5__hi.. alpha_6_ + alpha_12_ + alpha_18_ =l= 1 ;
stationarity_0_.. w_0_ + s_0_ + 0.34381173988453018*alpha_1_ + 1.2380837762647912*alpha_2_ + 1.6961041766054374*alpha_3_ + (-3.1637923753332533)*alpha_4_ + (-1.6636466755263661)*alpha_5_ + (-0.77498649138232167)*alpha_6_ + (-0.8237217055101318)*alpha_7_ + 0.20917557487171307*alpha_8_ + 0.651697767007658*alpha_9_ + (-1.8531427437189669)*alpha_10_ + (-1.513087596217391)*alpha_11_ + (-2.0544215579051417)*alpha_12_ + 0.62327446253735219*alpha_13_ + 0.87437024835832666*alpha_14_ + 0.43703864450131713*alpha_15_ + (-0.39512206018200824)*alpha_16_ + (-2.504478953839028)*alpha_17_ + (-0.052028974259886507)*alpha_18_ + (-1.184117966757189)*alpha_19_ =e= 0 ;
stationarity_1_.. w_1_ + s_1_ + (-0.34381173988453018)*alpha_1_ + (-1.2380837762647912)*alpha_2_ + (-1.6961041766054374)*alpha_3_ + 3.1637923753332533*alpha_4_ + 1.6636466755263661*alpha_5_ + 0.77498649138232167*alpha_6_ + 0.8237217055101318*alpha_7_ + (-0.20917557487171307)*alpha_8_ + (-0.651697767007658)*alpha_9_ + 1.8531427437189669*alpha_10_ + 1.513087596217391*alpha_11_ + 2.0544215579051417*alpha_12_ + (-0.62327446253735219)*alpha_13_ + (-0.87437024835832666)*alpha_14_ + (-0.43703864450131713)*alpha_15_ + 0.39512206018200824*alpha_16_ + 2.504478953839028*alpha_17_ + 0.052028974259886507*alpha_18_ + 1.184117966757189*alpha_19_ =e= 0 ;
stationarity_2_.. w_2_ + s_2_ + 1.6494197872190104*alpha_1_ + 0.331019065705217*alpha_2_ + (-0.820865383388351)*alpha_3_ + (-3.4039773570074865)*alpha_4_ + (-2.77585052652016)*alpha_5_ + (-3.629266734731345)*alpha_6_ + 1.3744456101970994*alpha_7_ + 0.15922500991447772*alpha_8_ + 1.048431100390633*alpha_9_ + (-2.3901220112721946)*alpha_10_ + (-0.40313002656511093)*alpha_11_ + (-0.87220538328899999)*alpha_12_ + (-0.0413259793472436)*alpha_13_ + (-0.19228506017854199)*alpha_14_ + 0.69305839135071157*alpha_15_ + (-0.42986369482223)*alpha_16_ + (-1.2950551948639502)*alpha_17_ + (-0.68368619077653447)*alpha_18_ + (-0.6617025720390349)*alpha_19_ =e= 0 ;
stationarity_3_.. w_3_ + s_3_ + (-1.6494197872190104)*alpha_1_ + (-0.331019065705217)*alpha_2_ + 0.820865383388351*alpha_3_ + 3.4039773570074865*alpha_4_ + 2.77585052652016*alpha_5_ + 3.629266734731345*alpha_6_ + (-1.3744456101970994)*alpha_7_ + (-0.15922500991447772)*alpha_8_ + (-1.048431100390633)*alpha_9_ + 2.3901220112721946*alpha_10_ + 0.40313002656511093*alpha_11_ + 0.87220538328899999*alpha_12_ + 0.0413259793472436*alpha_13_ + 0.19228506017854199*alpha_14_ + (-0.69305839135071157)*alpha_15_ + 0.42986369482223*alpha_16_ + 1.2950551948639502*alpha_17_ + 0.68368619077653447*alpha_18_ + 0.6617025720390349*alpha_19_ =e= 0 ;
stationarity_4_.. w_4_ + s_4_ + 1.2792041224184674*alpha_1_ + 0.48702779345953895*alpha_2_ + 0.4874615163203678*alpha_3_ + (-0.0009974977972676546)*alpha_4_ + 0.6795124831434591*alpha_5_ + 0.9006088705380388*alpha_6_ + (-0.6341961158462342)*alpha_7_ + (-0.54084558468580768)*alpha_8_ + 1.179508330684333*alpha_9_ + (-2.4976775938289935)*alpha_10_ + (-2.0199081259453435)*alpha_11_ + (-0.37076748564994289)*alpha_12_ + 2.3250307746388343*alpha_13_ + (-1.4443157663376163)*alpha_14_ + 1.8333369401026722*alpha_15_ + (-0.69604272396286848)*alpha_16_ + 1.7670746335034293*alpha_17_ + (-1.0039615758421696)*alpha_18_ + (-0.43643524714322124)*alpha_19_ =e= 0 ;
stationarity_5_.. w_5_ + s_5_ + (-1.2792041224184674)*alpha_1_ + (-0.48702779345953895)*alpha_2_ + (-0.4874615163203678)*alpha_3_ + 0.0009974977972676546*alpha_4_ + (-0.6795124831434591)*alpha_5_ + (-0.9006088705380388)*alpha_6_ + 0.6341961158462342*alpha_7_ + 0.54084558468580768*alpha_8_ + (-1.179508330684333)*alpha_9_ + 2.4976775938289935*alpha_10_ + 2.0199081259453435*alpha_11_ + 0.37076748564994289*alpha_12_ + (-2.3250307746388343)*alpha_13_ + 1.4443157663376163*alpha_14_ + (-1.8333369401026722)*alpha_15_ + 0.69604272396286848*alpha_16_ + (-1.7670746335034293)*alpha_17_ + 1.0039615758421696*alpha_18_ + 0.43643524714322124*alpha_19_ =e= 0 ;
stationarity_6_.. w_6_ + s_6_ + (-3)*alpha_1_ + (-3)*alpha_2_ + (-3)*alpha_4_ + (-2)*alpha_5_ + (-3)*alpha_6_ + (-3)*alpha_7_ - alpha_8_ + 3*alpha_9_ + (-2)*alpha_10_ - alpha_11_ + (-2)*alpha_12_ - alpha_13_ + (-2)*alpha_14_ + 2*alpha_15_ - alpha_16_ - alpha_18_ + alpha_19_ =e= 0 ;
stationarity_7_.. w_7_ + s_7_ - alpha_3_ + alpha_5_ + 2*alpha_7_ + alpha_8_ + (-2)*alpha_9_ + alpha_10_ + alpha_11_ + alpha_12_ + alpha_14_ + (-2)*alpha_15_ + alpha_16_ + alpha_17_ =e= 0 ;
stationarity_8_.. w_8_ + s_8_ + alpha_3_ - alpha_5_ + alpha_7_ - alpha_9_ + alpha_10_ + alpha_12_ + alpha_13_ + alpha_14_ - alpha_17_ + alpha_18_ - alpha_19_ =e= 0 ;
stationarity_9_.. w_9_ + s_9_ + 3*alpha_1_ + 3*alpha_2_ + 3*alpha_4_ + 2*alpha_5_ + 3*alpha_6_ =e= 0 ;
objective.. GAMS_OBJECTIVE =e= (4*alpha_1_ + 4*alpha_2_ + 4*alpha_3_ + 4*alpha_4_ + 4*alpha_5_ + 4*alpha_6_ + 2*alpha_7_ + alpha_8_ + 2*alpha_9_ + 2*alpha_10_ + 2*alpha_11_ + 2*alpha_12_ + alpha_13_ + 2*alpha_14_ + 3*alpha_15_ + alpha_16_ + 2*alpha_17_ + alpha_18_ + alpha_19_) - (0.5*(w_0_*w_0_ + w_1_*w_1_ + w_2_*w_2_ + w_3_*w_3_ + w_4_*w_4_ + w_5_*w_5_ + w_6_*w_6_ + w_7_*w_7_ + w_8_*w_8_ + w_9_*w_9_)) ;

alpha_1_.l = 0;
alpha_7_.l = 0;
alpha_13_.l = 0;
alpha_2_.l = 0;
alpha_8_.l = 0;
alpha_14_.l = 0;
alpha_3_.l = 0;
alpha_9_.l = 0;
alpha_15_.l = 0;
alpha_4_.l = 0;
alpha_10_.l = 0;
alpha_16_.l = 0;
alpha_5_.l = 0;
alpha_11_.l = 0;
alpha_17_.l = 0;
alpha_19_.l = 0;
alpha_6_.l = 0;
alpha_12_.l = 0;
alpha_18_.l = 0;
w_0_.l = 0;
s_0_.lo = -0.5;
s_0_.up = 0.5;
s_0_.l = 0;
w_1_.l = 0;
s_1_.lo = -0.5;
s_1_.up = 0.5;
s_1_.l = 0;
w_2_.l = 0;
s_2_.lo = -0.5;
s_2_.up = 0.5;
s_2_.l = 0;
w_3_.l = 0;
s_3_.lo = -0.5;
s_3_.up = 0.5;
s_3_.l = 0;
w_4_.l = 0;
s_4_.lo = -0.5;
s_4_.up = 0.5;
s_4_.l = 0;
w_5_.l = 0;
s_5_.lo = -0.5;
s_5_.up = 0.5;
s_5_.l = 0;
w_6_.l = 0;
s_6_.lo = -0.5;
s_6_.up = 0.5;
s_6_.l = 0;
w_7_.l = 0;
s_7_.lo = -0.5;
s_7_.up = 0.5;
s_7_.l = 0;
w_8_.l = 0;
s_8_.lo = -0.5;
s_8_.up = 0.5;
s_8_.l = 0;
w_9_.l = 0;
s_9_.lo = -0.5;
s_9_.up = 0.5;
s_9_.l = 0;

MODEL GAMS_MODEL /all/ ;
option solprint=off;
option limrow=0;
option limcol=0;
option solvelink=5;
SOLVE GAMS_MODEL USING nlp maximizing GAMS_OBJECTIVE;

Scalars MODELSTAT 'model status', SOLVESTAT 'solve status';
MODELSTAT = GAMS_MODEL.modelstat;
SOLVESTAT = GAMS_MODEL.solvestat;

Scalar OBJEST 'best objective', OBJVAL 'objective value';
OBJEST = GAMS_MODEL.objest;
OBJVAL = GAMS_MODEL.objval;

Scalar NUMVAR 'number of variables';
NUMVAR = GAMS_MODEL.numvar

Scalar NUMEQU 'number of equations';
NUMEQU = GAMS_MODEL.numequ

Scalar NUMDVAR 'number of discrete variables';
NUMDVAR = GAMS_MODEL.numdvar

Scalar NUMNZ 'number of nonzeros';
NUMNZ = GAMS_MODEL.numnz

Scalar ETSOLVE 'time to execute solve statement';
ETSOLVE = GAMS_MODEL.etsolve

