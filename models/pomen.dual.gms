$offlisting
$offdigit

EQUATIONS
	budget_0__hi
	budget_1__hi
	budget_2__hi
	budget_3__hi
	budget_4__hi
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
	alpha_2_
	alpha_5_
	alpha_3_
	alpha_6_
	alpha_7_
	alpha_4_
	alpha_8_
	alpha_9_;

VARIABLES
	GAMS_OBJECTIVE
	w_0_
	w_1_
	w_2_
	w_3_
	w_4_
	w_5_
	w_6_
	w_7_
	w_8_
	w_9_;


budget_0__hi.. alpha_1_ =l= 1 ;
budget_1__hi.. alpha_2_ + alpha_5_ =l= 1 ;
budget_2__hi.. alpha_3_ =l= 1 ;
budget_3__hi.. alpha_6_ + alpha_7_ =l= 1 ;
budget_4__hi.. alpha_4_ + alpha_8_ + alpha_9_ =l= 1 ;
stationarity_0_.. w_0_ + 1.3863251093272078*alpha_1_ + 0.780357950597452*alpha_2_ + 0.651697767007658*alpha_3_ + (-1.184117966757189)*alpha_4_ + 0.20917557487171307*alpha_5_ + (-1.8486886105988838)*alpha_6_ + (-1.4580206835369587)*alpha_7_ + (-1.6493306165420412)*alpha_8_ + (-0.32896962946020208)*alpha_9_ =e= 0 ;
stationarity_1_.. w_1_ + (-1.3863251093272078)*alpha_1_ + (-0.780357950597452)*alpha_2_ + (-0.651697767007658)*alpha_3_ + 1.184117966757189*alpha_4_ + (-0.20917557487171307)*alpha_5_ + 1.8486886105988838*alpha_6_ + 1.4580206835369587*alpha_7_ + 1.6493306165420412*alpha_8_ + 0.32896962946020208*alpha_9_ =e= 0 ;
stationarity_2_.. w_2_ + 1.5208851242749761*alpha_1_ + 0.5512141891752664*alpha_2_ + 1.048431100390633*alpha_3_ + (-0.6617025720390349)*alpha_4_ + 0.15922500991447772*alpha_5_ + (-3.0465969463485307)*alpha_6_ + (-1.9602583164499647)*alpha_7_ + (-0.3747800773509912)*alpha_8_ + 0.258572545473924*alpha_9_ =e= 0 ;
stationarity_3_.. w_3_ + (-1.5208851242749761)*alpha_1_ + (-0.5512141891752664)*alpha_2_ + (-1.048431100390633)*alpha_3_ + 0.6617025720390349*alpha_4_ + (-0.15922500991447772)*alpha_5_ + 3.0465969463485307*alpha_6_ + 1.9602583164499647*alpha_7_ + 0.3747800773509912*alpha_8_ + (-0.258572545473924)*alpha_9_ =e= 0 ;
stationarity_4_.. w_4_ + 2.6456675929681532*alpha_1_ + (-0.5225903900791968)*alpha_2_ + 1.179508330684333*alpha_3_ + (-0.43643524714322124)*alpha_4_ + (-0.54084558468580768)*alpha_5_ + (-1.209316130079439)*alpha_6_ + (-1.801634869866125)*alpha_7_ + 0.62003700184452848*alpha_8_ + (-1.5834728788021222)*alpha_9_ =e= 0 ;
stationarity_5_.. w_5_ + (-2.6456675929681532)*alpha_1_ + 0.5225903900791968*alpha_2_ + (-1.179508330684333)*alpha_3_ + 0.43643524714322124*alpha_4_ + 0.54084558468580768*alpha_5_ + 1.209316130079439*alpha_6_ + 1.801634869866125*alpha_7_ + (-0.62003700184452848)*alpha_8_ + 1.5834728788021222*alpha_9_ =e= 0 ;
stationarity_6_.. w_6_ + (-2.500105234957933)*alpha_1_ + (-2.5661357408681336)*alpha_2_ + 1.039595027776643*alpha_3_ + 0.1244333218161723*alpha_4_ + (-0.78306787043406678)*alpha_5_ + (-2.000165610691929)*alpha_6_ + (-0.5000828053459646)*alpha_7_ + (-1.1244333218161724)*alpha_8_ + (-1.1244333218161724)*alpha_9_ =e= 0 ;
stationarity_7_.. w_7_ + (-0.4998947650420668)*alpha_1_ + 0.56613574086813367*alpha_2_ + (-0.03959502777664303)*alpha_3_ + 0.8755666781838278*alpha_4_ + 0.78306787043406678*alpha_5_ + 0.00016561069192916333*alpha_6_ + (-0.49991719465403545)*alpha_7_ + 0.1244333218161723*alpha_8_ + 0.1244333218161723*alpha_9_ =e= 0 ;
stationarity_8_.. w_8_ + 0.5001052349579332*alpha_1_ + 0.56613574086813367*alpha_2_ + 0.96040497222335697*alpha_3_ + (-0.12443332181617239)*alpha_4_ + (-0.2169321295659331)*alpha_5_ + 0.00016561069192916333*alpha_6_ + 0.5000828053459646*alpha_7_ + (-0.8755666781838279)*alpha_8_ + 0.12443332181617206*alpha_9_ =e= 0 ;
stationarity_9_.. w_9_ + 2.4998947650420669*alpha_1_ + 1.4338642591318662*alpha_2_ + (-1.960404972223357)*alpha_3_ + (-0.8755666781838278)*alpha_4_ + 0.2169321295659331*alpha_5_ + 1.999834389308071*alpha_6_ + 0.49991719465403545*alpha_7_ + 1.8755666781838278*alpha_8_ + 0.8755666781838278*alpha_9_ =e= 0 ;
objective.. GAMS_OBJECTIVE =e= (3*alpha_1_ + 3*alpha_2_ + 2*alpha_3_ + alpha_4_ + alpha_5_ + 3*alpha_6_ + alpha_7_ + 2*alpha_8_ + alpha_9_) - (0.5*(w_0_*w_0_ + w_1_*w_1_ + w_2_*w_2_ + w_3_*w_3_ + w_4_*w_4_ + w_5_*w_5_ + w_6_*w_6_ + w_7_*w_7_ + w_8_*w_8_ + w_9_*w_9_)) ;

alpha_1_.l = 0;
alpha_2_.l = 0;
alpha_5_.l = 0;
alpha_3_.l = 0;
alpha_6_.l = 0;
alpha_7_.l = 0;
alpha_4_.l = 0;
alpha_8_.l = 0;
alpha_9_.l = 0;
w_0_.l = 0;
w_1_.l = 0;
w_2_.l = 0;
w_3_.l = 0;
w_4_.l = 0;
w_5_.l = 0;
w_6_.l = 0;
w_7_.l = 0;
w_8_.l = 0;
w_9_.l = 0;

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

