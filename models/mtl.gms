$offlisting
$offdigit

EQUATIONS
	budget_0__hi
	quad_0__hi
	quad_1__hi
	objective;

POSITIVE VARIABLES
	alpha_1_
	alpha_2_
	alpha_3_
	alpha_4_
	alpha_5_
	alpha_6_
	alpha_7_
	alpha_8_
	alpha_9_
	alpha_10_;

VARIABLES
	GAMS_OBJECTIVE
	theta;


budget_0__hi.. alpha_1_ + alpha_2_ + alpha_3_ + alpha_4_ + alpha_5_ + alpha_6_ + alpha_7_ + alpha_8_ + alpha_9_ + alpha_10_ =l= 6 ;
quad_0__hi.. (2.6363238887721545*alpha_1_*alpha_1_ + 1.2857156986872507*alpha_2_*alpha_2_ + 2.6726477256113514*alpha_1_*alpha_2_ + 0.22974454787239526*alpha_3_*alpha_3_ + (-1.1576449840628076)*alpha_1_*alpha_3_ + (-0.7873198385231481)*alpha_2_*alpha_3_ + 0.027366328645156097*alpha_4_*alpha_4_ + 0.0411454472889137*alpha_1_*alpha_4_ + 0.08815386545781861*alpha_2_*alpha_4_ + 0.073322093591844009*alpha_3_*alpha_4_ + 1.1811486234150119*alpha_5_*alpha_5_ + 1.4905707064939779*alpha_1_*alpha_5_ + (-0.2267765933569485)*alpha_2_*alpha_5_ + (-0.6100422593587272)*alpha_3_*alpha_5_ + (-0.28391080979074679)*alpha_4_*alpha_5_ + 0.28567072085778589*alpha_6_*alpha_6_ + (-0.7451973803614953)*alpha_1_*alpha_6_ + 0.14292950301977003*alpha_2_*alpha_6_ + (-0.12688902800079513)*alpha_3_*alpha_6_ + (-0.08804923345994755)*alpha_4_*alpha_6_ + (-0.10267916456868921)*alpha_5_*alpha_6_ + 0.0804178523452128*alpha_7_*alpha_7_ + 0.6067200142366351*alpha_1_*alpha_7_ + (-0.001421070963529357)*alpha_2_*alpha_7_ + (-0.035764525044616975)*alpha_3_*alpha_7_ + 0.012882507003224297*alpha_4_*alpha_7_ + 0.30087396349229728*alpha_5_*alpha_7_ + (-0.2732443240680274)*alpha_6_*alpha_7_ + 0.50773092299868317*alpha_8_*alpha_8_ + 0.3147270581123599*alpha_1_*alpha_8_ + (-0.028368005312649349)*alpha_2_*alpha_8_ + 0.37015726088802187*alpha_3_*alpha_8_ + 0.21353479538324752*alpha_4_*alpha_8_ + (-0.81321018355393726)*alpha_5_*alpha_8_ + (-0.6100152000413348)*alpha_6_*alpha_8_ + 0.1941959748232081*alpha_7_*alpha_8_ + 0.24584052318687735*alpha_9_*alpha_9_ + (-0.39564422836498359)*alpha_1_*alpha_9_ + 0.32176840307093507*alpha_2_*alpha_9_ + (-0.2016038180146747)*alpha_3_*alpha_9_ + (-0.08397989265144036)*alpha_4_*alpha_9_ + (-0.011145115639649206)*alpha_5_*alpha_9_ + 0.51990779345404858*alpha_6_*alpha_9_ + (-0.2328191507318989)*alpha_7_*alpha_9_ + (-0.5839437859424573)*alpha_8_*alpha_9_ + 0.8660291339473067*alpha_10_*alpha_10_ + 1.5762230388063068*alpha_1_*alpha_10_ + 1.5493811384170295*alpha_2_*alpha_10_ + (-0.09896292597141237)*alpha_3_*alpha_10_ + 0.25493269477834424*alpha_4_*alpha_10_ + (-1.1173386720866025)*alpha_5_*alpha_10_ + (-0.3422063225140912)*alpha_6_*alpha_10_ + 0.09095626748215643*alpha_7_*alpha_10_ + 0.85695784017182408*alpha_8_*alpha_10_ + (-0.23172936488454388)*alpha_9_*alpha_10_) - theta =l= 0 ;
quad_1__hi.. (5.4444444444444455*alpha_1_*alpha_1_ + 0.75*alpha_2_*alpha_2_ + 2.3333333333333335*alpha_1_*alpha_2_ + 0.75*alpha_3_*alpha_3_ + 3.8888888888888893*alpha_1_*alpha_3_ + 0.49999999999999994*alpha_2_*alpha_3_ + 0.33333333333333337*alpha_4_*alpha_4_ + (-1.5555555555555556)*alpha_1_*alpha_4_ + (-0.99999999999999989)*alpha_2_*alpha_4_ + (-0.33333333333333326)*alpha_3_*alpha_4_ + 1.6944444444444446*alpha_5_*alpha_5_ + 3.5*alpha_1_*alpha_5_ + 2.25*alpha_2_*alpha_5_ + 0.75*alpha_3_*alpha_5_ + (-1.5)*alpha_4_*alpha_5_ + 0.19444444444444445*alpha_6_*alpha_6_ + 1.1666666666666667*alpha_1_*alpha_6_ + 0.75*alpha_2_*alpha_6_ + 0.25*alpha_3_*alpha_6_ + (-0.5)*alpha_4_*alpha_6_ + 1.1111111111111112*alpha_5_*alpha_6_ + 0.083333333333333329*alpha_7_*alpha_7_ + 0.3888888888888889*alpha_1_*alpha_7_ + 0.25*alpha_2_*alpha_7_ + 0.08333333333333334*alpha_3_*alpha_7_ + (-0.16666666666666666)*alpha_4_*alpha_7_ + 0.41666666666666669*alpha_5_*alpha_7_ + 0.083333333333333329*alpha_6_*alpha_7_ + 0.77777777777777779*alpha_8_*alpha_8_ + 3.8888888888888893*alpha_1_*alpha_8_ + 0.5*alpha_2_*alpha_8_ + 1.5*alpha_3_*alpha_8_ + (-0.3333333333333333)*alpha_4_*alpha_8_ + 0.7222222222222222*alpha_5_*alpha_8_ + 0.27777777777777779*alpha_6_*alpha_8_ + 0.027777777777777776*alpha_9_*alpha_9_ + (-0.02777777777777779)*alpha_5_*alpha_9_ + 0.027777777777777776*alpha_6_*alpha_9_ + (-0.083333333333333329)*alpha_7_*alpha_9_ + 0.05555555555555555*alpha_8_*alpha_9_ + 0.19444444444444445*alpha_10_*alpha_10_ + 0.77777777777777779*alpha_1_*alpha_10_ + 0.49999999999999994*alpha_2_*alpha_10_ + 0.16666666666666669*alpha_3_*alpha_10_ + (-0.33333333333333326)*alpha_4_*alpha_10_ + 0.6944444444444444*alpha_5_*alpha_10_ + 0.3055555555555555*alpha_6_*alpha_10_ + (-0.083333333333333329)*alpha_7_*alpha_10_ + 0.27777777777777779*alpha_8_*alpha_10_ + 0.1111111111111111*alpha_9_*alpha_10_) - theta =l= 0 ;
objective.. GAMS_OBJECTIVE =e= (4*alpha_1_ + 2.1666666666666665*alpha_2_ + 2*alpha_3_ + 0.5*alpha_4_ + 2*alpha_5_ + 1.5*alpha_6_ + 1.3333333333333333*alpha_7_ + 2.1666666666666665*alpha_8_ + 1.1666666666666667*alpha_9_ + 1.5*alpha_10_) - theta ;

alpha_1_.l = 0;
alpha_2_.l = 0.067070640837287337;
alpha_3_.l = 0;
alpha_4_.l = 0.13457865665885149;
alpha_5_.l = 0;
alpha_6_.l = 0;
alpha_7_.l = 2.4554322981413756;
alpha_8_.l = 0.5000002003915589;
alpha_9_.l = 2.502688763004877;
alpha_10_.l = 0.34022973988862143;
theta.l = 0.49999994118304836;

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

